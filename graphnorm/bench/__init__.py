"""Benchmarking: norm variants x seeds (or repeated splits) in OGB leaderboard form, summaries, plots, paired comparisons."""
