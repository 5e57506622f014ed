"""Reading transcripts: find files, classify records, tail new bytes, digest, watch, good night."""
