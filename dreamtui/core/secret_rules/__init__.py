"""The data and machinery under :mod:`dreamtui.core.secrets`: gitleaks' maintained rule set
(:mod:`.gitleaks`, its ``gitleaks.toml`` and licence beside it) and the Unicode normalisation the
scanner reads text through (:mod:`.normalize`)."""
