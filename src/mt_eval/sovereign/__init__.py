"""Sovereign evaluation (Benchmark Spec §2.3, §6.4, §8, §9.5): secret gold segments stay with the
governance organisation; a submitted method runs in a sandbox on them and only scores come back."""
