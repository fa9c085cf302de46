"""Offline preview: run the real program under Pulumi's mock runtime and record it."""
