"""Human review campaigns (Benchmark Spec §7): blind, stratified samples of outputs rated by bilingual
speakers on the reject / gist / acceptable / excellent scale, with control items, reviewer quality
control, agreement statistics and the §7.2 validation gate (``gate.review_verdict``).

``sampling`` and ``controls`` decide what is shown, ``campaign`` keeps it in the store, ``offline`` is
the batch a reviewer fills in without a network, ``quality`` and ``agreement`` are the statistics,
``report`` and ``gate`` read the ratings back. Nothing here prints or imports the CLI.
"""
