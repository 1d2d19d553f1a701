"""ndtwin: a digital twin of Azure ND/NG GPU clusters, from Python.

Every command of the ``ndtwin`` CLI is a function here, generated from the C++ registry of
commands (so a command added to the registry appears here without a line of Python)::

    import ndtwin
    r = ndtwin.train(model="llama2-70b", sku="ND96isr_H100_v5", vms=8, gbs=512, tp=8, pp=2)
    r.step_time_s          # fields of the --json document as attributes
    r.to_dict()            # exactly the CLI's --json document
    r.to_json()            # byte-identical to `ndtwin --json train ...`
    r.plot()               # a matplotlib Figure

Keyword arguments are the CLI's flags with dashes as underscores (``--min-bytes`` is
``min_bytes=``), with the same defaults. ``sku list``/``sku show``/``model list``/``model show``
are ``skus()``, ``sku(name)``, ``models()``, ``model(name)``; other commands with two words join
them with an underscore (``plan train`` is ``plan_train``). A model may be a preset name, a
model YAML path, a Hugging Face ``config.json`` path, or a dict (a Hugging Face config or an
ndtwin model document). Errors raise :class:`ndtwin.Error` (a ``ValueError``) with the CLI's
one-line message, options spelled the Python way (``tp=`` for ``--tp``). Calls release the GIL
and are safe from several threads.
"""

from ._api import (
    Error,
    NdtwinWarning,
    Result,
    call,
    commands,
    get_data_dir,
    set_data_dir,
    _install_commands,
)
from ._core import __version__

Error.__module__ = NdtwinWarning.__module__ = Result.__module__ = "ndtwin"  # tracebacks say ndtwin.Error

__all__ = ["Error", "NdtwinWarning", "Result", "call", "commands", "get_data_dir", "set_data_dir", "__version__"]
__all__ += _install_commands(globals())
