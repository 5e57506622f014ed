"""What every start runs first (issue 34): the ledger brought in line with the memory repository for
every kind of decision, not only a lesson's.

A kill between a decision's commit and its ledger write leaves git one step ahead. The lesson accept's
reconcile (:func:`dreamtui.core.memory.decisions.reconcile`) always put that right at start; the
consolidation decisions (:func:`dreamtui.core.memory.consolidate.reconcile`) and the outside decisions
(:func:`dreamtui.core.memory.outside.recover`) did it only at their own next decision, so a list or the
app read a stale ledger meanwhile. :func:`reconcile` runs all three, under the memory lock, then checks
the index invariant (:mod:`.index_check`): each problem is a notice.
"""

from __future__ import annotations

from dreamtui.core.config import Config
from dreamtui.core.ledger import Ledger
from dreamtui.core.memory import (
    consolidate,
    decisions,
    gitops,
    index_check,
    outside,
    outside_agents,
    outside_tree,
)
from dreamtui.core.memory.decisions import ReconcileReport, memory_lock


def reconcile(config: Config, ledger: Ledger) -> ReconcileReport:
    """Every decision git holds and the ledger missed recorded, every interrupted write put back or
    finished; one report (its notices say what was done)."""
    with memory_lock(config):
        report = decisions.reconcile(config, ledger)
        if not gitops.repo_exists(config.memory):
            return report
        repo = gitops.open_repo(config.memory, create=False)
        if gitops.not_writable(repo) is None:
            temps = outside_tree.walk(gitops.work_tree(repo)).temps  # a killed reject's, once settled
            outside.recover(config, ledger, repo, report.notices, temps)
            if (gitops.work_tree(repo) / outside_agents.SNAPSHOTS).is_dir() or outside_agents.any_in_head(
                repo
            ):
                outside_agents.sync_snapshots(repo, notices=report.notices)  # the agents' reviewed copies
            outside_agents.clear_temps(config, ledger)  # a killed restore's, in the agents' folders
            report.notices.extend(consolidate.reconcile(config, ledger, repo))
            # mid-merge the index is half one side, half the other: checked once the merge is over
            report.notices.extend(index_check.problems(gitops.work_tree(repo), ledger))
        return report
