"""The memory repository: layout, frontmatter, git, decisions, review file, briefing, normalise, link."""
