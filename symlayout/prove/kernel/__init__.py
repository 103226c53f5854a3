"""The rest of the kernel (issue 31): accumulators reused as operands in registers (``[reuse.X]``)."""
