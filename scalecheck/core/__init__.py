"""L2: pure numerics (numpy, scipy). Records in, records out: no files, printing, logging or git."""
