"""ddprun, a native drop-in replacement for PyTorch's torchrun.

This package only finds the ddprun executable that the wheel installed (see __main__):
`python -m ddprun ARGS` is `ddprun ARGS`.
"""
