"""SMDDP for PyTorch, served by smd: import ``torch_smddp`` to register the
backend "smddp", or use ``distributed`` for SMDDP's rank calls."""
