"""Benchmark sweeps (Benchmark Spec §6, §10.2): a declared parameter space → a matrix of run cards.

The benchmark file (TOML; ``examples/sweep-eng-spa.toml``)::

    [sweep]
    name = "eng-spa-baseline"             # names the folder runs/<name>/ (letters, digits, . _ -)
    corpus = ["ntrex128-eng-spa.json"]    # one file or several; relative to this file
    ids = "1-50"                          # optional selection, as mt-eval run: segment, ids, difficulty
    condition = "default"                 # optional; runs_dir = "runs" (relative to where you run)

    [method]                              # the template every axis cell fills in
    spec = "llm:{model}"                  # a method spec; {axis} is replaced by the cell's value
    base_url = "http://localhost:8000/v1" # any `mt-eval run` LLM option by its flag name:
    batch_size = 10                       #   model provider base_url api_key_env temperature max_tokens
    cache = true                          #   llm_seed system_prompt coaching batch_size max_retries timeout
                                          #   pricing validator fst_retries (files relative to this file)
    [axes]                                # cells = product of the axes' values, in this order
    model = ["openai/gpt-4o-mini", "google/gemini-2.5-flash"]
    temperature = [0.0, 0.7]
    prompt = [false, "prompts/terse.txt"] # prompt/system_prompt, coaching, tools/validator: a file, or
                                          # false for "without" (built-in prompt, no coaching, no tools)
    [[exclude]]                           # any cell matching every key = value here is left out
    model = "google/gemini-2.5-flash"
    temperature = 0.7

    [[cell]]                              # extra cells outside the product, e.g. a baseline
    spec = "apertium:eng-spa"
    name = "apertium"                     # optional; its key is cell=<name>

An axis is any method option (``prompt``, ``coaching`` and ``tools`` are §6.2's names for
``system_prompt``, ``coaching`` and ``validator``); coaching data turns ``llm`` into ``coached``, a
validator into ``pipeline:validate-retry``. Every other table, key or axis is refused with the file
and key named, as is an axis without values or a product with every cell excluded.

Modules: ``spec`` (the file as a typed declaration), ``plan`` (cells, keys, cost estimate),
``execute`` (cell folders, finished/resume, the local executor), ``ray_executor``, ``publishing``
(``--publish``: cards and sweep rows in the store) and ``report`` (best per model, axis effects,
entries no cell gets right).
"""
