"""``torch.hub``: the cache directory (`get_dir`, `set_dir`) as PyTorch chooses it, and
`chainrule.errors.UnsupportedError` from everything that would download code or weights
(chainrule never fetches or runs code from the network)."""

from __future__ import annotations

import os
from typing import Any

from ..errors import UnsupportedError

_hub_dir: str | None = None


def get_dir() -> str:
    """The hub's directory: the one `set_dir` chose, else ``$TORCH_HOME/hub``, where
    ``TORCH_HOME`` defaults to ``$XDG_CACHE_HOME/torch`` (``~/.cache/torch``), as in PyTorch."""
    if _hub_dir is not None:
        return _hub_dir
    cache = os.getenv("XDG_CACHE_HOME", os.path.join("~", ".cache"))
    home = os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch")))
    return os.path.join(home, "hub")


def set_dir(d: str | os.PathLike) -> None:
    """Make `get_dir` answer ``d`` from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


def _no_downloads(call: str) -> UnsupportedError:
    return UnsupportedError(
        f"torch.hub.{call}: chainrule does not download models or code; "
        "build the model in the program and load a state_dict file "
        "with torch.load"
    )


def load(repo_or_dir: str, model: str, *args, **kwargs) -> Any:
    """Raises `UnsupportedError`: chainrule does not fetch or run a hub repository's code."""
    raise _no_downloads("load")


def list(github: str, *args, **kwargs) -> Any:  # noqa: A001  (PyTorch's name)
    """Raises `UnsupportedError`, as `load`."""
    raise _no_downloads("list")


def help(github: str, model: str, *args, **kwargs) -> Any:  # noqa: A001  (PyTorch's name)
    """Raises `UnsupportedError`, as `load`."""
    raise _no_downloads("help")


def load_state_dict_from_url(url: str, *args, **kwargs) -> Any:
    """Raises `UnsupportedError`, as `load`."""
    raise _no_downloads("load_state_dict_from_url")


def download_url_to_file(url: str, dst: str, *args, **kwargs) -> None:
    """Raises `UnsupportedError`, as `load`."""
    raise _no_downloads("download_url_to_file")


__all__ = ["download_url_to_file", "get_dir", "help", "list", "load",
           "load_state_dict_from_url", "set_dir"]  # fmt: skip
