"""Publishing finished runs to a folder or S3-compatible storage, with their history."""
