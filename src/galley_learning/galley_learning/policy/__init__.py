"""Learning from bags: Kitchen-R's diffusion policy.

``frames`` (one bag as observations and action points), ``dataset`` (a folder of bags as a
memory-mapped training set with normalisation statistics), ``model`` (the network), ``train``
(DDPM training, EMA, checkpoints), ``runtime`` (a trained policy acting). The ``diffusion_policy``
node (galley_nodes) runs it in the simulator; ``galley collect``, ``galley train`` and
``galley eval --policy`` are the commands.
"""
