"""Proving proposals: verify quotes, scan secrets, dedup (lexical and the model judge), the gate run."""
