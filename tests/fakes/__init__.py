"""Test helpers owned by the extractor tests: a fake Messages API server and labelled fixtures."""
