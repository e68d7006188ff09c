"""emit.py — the "candidate" configs/pytest's tests check (FLOTILLA_VARIANT=b gets the sum wrong)."""
import os


def variant():
    return os.environ.get("FLOTILLA_VARIANT", "a")


def greeting():
    return f"hello from variant {variant()}"


def add(a, b):
    return a + b + (1 if variant() == "b" else 0)
