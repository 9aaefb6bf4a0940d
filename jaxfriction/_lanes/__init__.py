"""The lanes of a sweep: one lane program and its executors, between the physics core and
the workflows.

- :mod:`.program`: one lane as JAX code (the template system with the lane's values set,
  run, measured, differentiated) and the rules of its status.
- :mod:`.traced`, :mod:`.pieces`: the same lane in the traced form that the compiled
  executors run (the RK4 step with tangents, the saved-point measures and their reduction
  rules, the output layout), evaluated component by component (:mod:`.componentwise`) or as
  loops over each lane's arrays (:mod:`.looped`, :mod:`.looped_values`).
- Executors, one module each, with their option: :mod:`.vmap` (the XLA path), :mod:`.fused`
  (a Pallas kernel; :mod:`.lowering` checks its Triton lowering) and :mod:`.compiled` (the
  program written by :mod:`.compiled_loop` and compiled by numba, :mod:`.numba_program`).
  :mod:`.kernels` holds the options' base, :class:`~jaxfriction.AutoKernel` and how a
  fourth executor is added.

Nothing here imports the workflows; the sweep (``jaxfriction._workflows.sweep``) plans a
sweep, chunks it and runs what an executor's option builds.
"""
