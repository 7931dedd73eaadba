"""Command-line handling shared by export.py and reference.py (imported from this folder)."""
import os
import sys


def outdir_and_models(args, models, usage):
    """Reads args = OUTDIR [MODEL ...] and returns (OUTDIR, the models named, or every one of
    models when none are), creating OUTDIR; None, after printing usage (args missing or an
    option left over) or the unknown names to stderr."""
    if not args or args[0].startswith("-"):
        print(usage, file=sys.stderr)
        return None
    outdir, names = args[0], args[1:] or list(models)
    unknown = [n for n in names if n not in models]
    if unknown:
        print(f"unknown models {unknown}; known: {list(models)}", file=sys.stderr)
        return None
    os.makedirs(outdir, exist_ok=True)
    return outdir, names
