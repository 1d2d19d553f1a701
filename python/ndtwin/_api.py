"""The functions of ndtwin, generated from the C++ registry of commands (ndtwin._core)."""

import hashlib
import inspect
import json
import keyword
import math
import os
import re
import tempfile
import threading
import warnings

from . import _core
from ._result import Result

# Commands whose Python name is not their words joined by "_": the catalog and model listings
# read better as plurals ("ndtwin.skus()") and the show commands as the noun ("ndtwin.sku(n)").
_RENAMES = {"sku list": "skus", "sku show": "sku", "model list": "models", "model show": "model"}

_REGISTRY = json.loads(_core.registry_json())
_BY_NAME = {c["name"]: c for c in _REGISTRY}

_data_dir = None
_data_dir_lock = threading.Lock()


class Error(ValueError):
    """A command refused its input or could not run: the CLI's one-line message.

    ``code`` names the reason: "invalid_input", "not_found", "infeasible", "does_not_fit",
    "unsupported", "slo_unmet" or "internal" (our bug). ``command`` is the command's name.
    """

    def __init__(self, message, code="invalid_input", command=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.command = command


class NdtwinWarning(UserWarning):
    """A warning a command emitted (the CLI prints "ndtwin: warning: ...")."""


def set_data_dir(path):
    """Use the data directory `path` for later calls (None: the CLI's default, $NDTWIN_DATA or
    the built-in data/). Like the CLI's --hw-data. Each directory is loaded once, on first use."""
    global _data_dir
    with _data_dir_lock:
        _data_dir = None if path is None else os.fspath(path)


# An installed package (pip install .) carries its data beside the module; a build tree's module
# uses the CLI's default (the checkout's data/, or $NDTWIN_DATA).
_PACKAGED_DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")


_HAS_PACKAGED_DATA = os.path.isdir(_PACKAGED_DATA)


def _default_data_dir():
    if _HAS_PACKAGED_DATA and not os.environ.get("NDTWIN_DATA"):
        return _PACKAGED_DATA
    return ""  # the core's default: $NDTWIN_DATA or the built-in data/


def get_data_dir():
    """The data directory calls use (the CLI's default when none was set)."""
    with _data_dir_lock:
        if _data_dir is not None:
            return _data_dir
    return _default_data_dir() or _core.default_data_dir()


def commands():
    """The registry: a list of {name, python_name, help, options: [{name, python_name, help,
    type, default, required, positional, local_file}]}, in `ndtwin --help` order."""
    out = []
    for c in _REGISTRY:
        d = dict(c, python_name=_python_name(c["name"]))
        d["options"] = [dict(o, python_name=_py_option(o["name"])) for o in c["options"]]
        out.append(d)
    return out


def _python_name(command):
    return _RENAMES.get(command, command.replace(" ", "_").replace("-", "_"))


def _py_option(name):
    n = name.replace("-", "_")
    return n + "_" if keyword.iskeyword(n) else n


# Per command: Python keyword -> the option's name ("min_bytes" -> "min-bytes"), and whether the
# command takes a model (--hf-config). Computed once: a call is a dict lookup per argument.
_KEYWORDS = {c["name"]: {_py_option(o["name"]): o["name"] for o in c["options"]}
             for c in _REGISTRY}
_TAKES_MODEL = {c["name"]: any(o["name"] == "hf-config" for o in c["options"]) for c in _REGISTRY}


def _spelled(name):
    return _py_option(name) + "="


def _message(message, cmd):
    """Every Error's message, made in this one place: the CLI's one line (what `ndtwin` prints
    after "ndtwin: error: "), options spelled the Python way. The core's run and range errors come
    respelled already ("--tp" is "tp="); the binding's say "train: option 'min-bytes' takes ...",
    which the CLI never prints: the command prefix goes (the function names the command, as the
    web's URL does; Error.command keeps it) and "option 'min-bytes'" reads "min_bytes=", as the
    CLI's "--min-bytes" ("--sku is required" is "sku= is required"). An unknown option is named
    as the caller wrote it ("unknown option 'no_such='"), then the valid ones ("valid: a_b=, c=";
    "valid: none" for a command without options)."""
    if cmd is None:
        return message
    if message.startswith(cmd["name"] + ": "):
        message = message[len(cmd["name"]) + 2:]
    names = {o["name"] for o in cmd["options"]}

    def one(m):
        return _spelled(m.group(1)) if m.group(1) in names else m.group(0)

    message = re.sub(r"^unknown option '([A-Za-z0-9_-]+)'",
                     lambda m: "unknown option '%s'" % _spelled(m.group(1)), message)
    message = re.sub(r"option '([A-Za-z0-9_-]+)'", one, message)
    m = re.search(r"; valid: (.*)$", message)
    if m:
        valid = ", ".join(_spelled(v) if v in names else v for v in m.group(1).split(", ") if v)
        message = message[: m.start(1)] + (valid or "none")
    return message


def _error(message, cmd, code="invalid_input", command=None):
    """The Error of a call of `cmd` (None: no such command): its message through _message."""
    return Error(_message(message, cmd), code=code,
                 command=command if cmd is None else cmd["name"])


# ---- Models given as a dict or a Hugging Face config.json ----

_HF_KEYS = ("model_type", "hidden_size", "num_hidden_layers", "num_attention_heads")


def _model_dir():
    d = os.path.join(tempfile.gettempdir(), "ndtwin-python-%d" % os.getuid())
    os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def _write_once(path, text):
    """Writes `text` to `path` unless it is there (the name is the content's hash), atomically:
    concurrent calls with the same model never read a half-written file."""
    if os.path.exists(path):
        return
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    tmp = "%s.%d.%d.tmp" % (path, os.getpid(), threading.get_ident())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)


def _model_file(d):
    """A model dict as a file the core reads: ("hf-config", path) for a Hugging Face config,
    ("model-file", path) for an ndtwin model document. The path is named by the content's hash,
    so the same dict gives the same path, and the same output, every time."""
    text = json.dumps(d, sort_keys=True, allow_nan=False)
    digest = hashlib.sha256(text.encode()).hexdigest()[:16]
    if any(k in d for k in _HF_KEYS):
        name = str(d.get("_name_or_path") or d.get("name") or "custom").rstrip("/").split("/")[-1]
        name = re.sub(r"[^A-Za-z0-9._-]", "_", name) or "custom"
        # The core names a config.json's model after its folder (".../Llama-2-70b/config.json").
        path = os.path.join(_model_dir(), digest, name, "config.json")
        kind = "hf-config"
    else:
        path = os.path.join(_model_dir(), digest + ".yaml")  # JSON is YAML
        kind = "model-file"
    _write_once(path, text)
    return kind, path


def _resolve_model(cmd, args):
    """Rewrites a model given as a dict, a config.json path or a PathLike into the option the
    core takes (--hf-config, --model-file). The model's slot is "model", or the positional NAME
    of a command that takes --hf-config (model show)."""
    names = [o["name"] for o in cmd["options"]]
    if "hf-config" not in names:
        return args
    slot = "model" if "model" in names else next(
        (o["name"] for o in cmd["options"] if o["positional"]), None)
    value = args.get(slot)
    if value is None:
        return args
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, dict):
        kind, path = _model_file(value)
    elif isinstance(value, str) and value.endswith(".json"):
        kind, path = "hf-config", value
    else:
        args[slot] = value
        return args
    del args[slot]
    if kind == "model-file" and "model-file" not in names:
        kind = slot  # model show NAME takes a model .yaml file itself
    args[kind] = path
    return args


# ---- Calls ----


def _jsonable(value, option, cmd):
    """A keyword argument as the JSON value the core binds (numpy scalars, paths, tuples)."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _error("option '%s' must be a finite number (got %r)" % (option, value), cmd)
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, option, cmd) for v in value]
    if hasattr(value, "item"):  # numpy scalars
        return _jsonable(value.item(), option, cmd)
    raise _error("option '%s' takes a number, a string, a bool or a list (got %s)"
                 % (option, type(value).__name__), cmd)


def call(command, data_dir=None, _warn=True, **kwargs):
    """Runs the command named `command` ("train", "plan train") with the options as keyword
    arguments (dashes or underscores), and returns its Result. Options given as None take their
    defaults."""
    cmd = _BY_NAME.get(command)
    if cmd is None:
        raise _error("unknown command '%s'; use one of: %s"
                     % (command, ", ".join(c["name"] for c in _REGISTRY)), None, command=command)
    keywords = _KEYWORDS[command]
    args = {}
    for key, value in kwargs.items():
        if value is None:
            continue
        name = keywords.get(key) or key.replace("_", "-")
        args[name] = value
    if _TAKES_MODEL[command]:
        args = _resolve_model(cmd, args)  # a dict or a path as the file option the core takes
    for name, value in args.items():
        if type(value) not in (int, str, bool, float) or (
                type(value) is float and not math.isfinite(value)):
            args[name] = _jsonable(value, name, cmd)
    if data_dir is None:
        with _data_dir_lock:
            data_dir = _data_dir
    if data_dir is None:
        data_dir = _default_data_dir()
    code, payload, warns, progress, notes = _core.call(
        command, json.dumps(args), os.fspath(data_dir))
    if code != "ok":
        raise _error(payload, cmd, code=code)
    for w in warns if _warn else ():
        warnings.warn(w, NdtwinWarning, stacklevel=3)
    return Result(command, payload, warnings=warns, progress=progress, notes=notes, args=kwargs)


def _make_function(cmd):
    pyname = _python_name(cmd["name"])
    params = []
    for positional in (True, False):
        for o in cmd["options"]:
            if o["positional"] != positional:
                continue
            kind = (inspect.Parameter.POSITIONAL_OR_KEYWORD if positional
                    else inspect.Parameter.KEYWORD_ONLY)
            # A required option has no default (the core names it when it is missing).
            default = inspect.Parameter.empty if o["required"] else o["default"]
            params.append(inspect.Parameter(_py_option(o["name"]), kind, default=default))
    params.append(inspect.Parameter("data_dir", inspect.Parameter.KEYWORD_ONLY, default=None))
    signature = inspect.Signature(params)
    command = cmd["name"]
    positional = [_py_option(o["name"]) for o in cmd["options"] if o["positional"]]

    def function(*args, **kwargs):
        if args:
            if len(args) > len(positional):
                raise TypeError("%s() takes %d positional argument%s but %d were given" % (
                    pyname, len(positional), "" if len(positional) == 1 else "s", len(args)))
            for name, value in zip(positional, args):
                if name in kwargs:
                    raise TypeError("%s() got multiple values for argument '%s'" % (pyname, name))
                kwargs[name] = value
        return call(command, **kwargs)

    function.__name__ = function.__qualname__ = pyname
    function.__signature__ = signature
    lines = ["%s\n\nThe `ndtwin %s` command; returns a Result (see ndtwin.Result).\n"
             % (cmd["help"], command), "Keyword arguments (the CLI's flags):"]
    for o in cmd["options"]:
        req = ", required" if o["required"] else ""
        lines.append("    %s (%s%s): %s" % (_py_option(o["name"]), o["type"], req, o["help"]))
    lines.append("    data_dir: the data directory (default: ndtwin.get_data_dir())")
    function.__doc__ = "\n".join(lines)
    return pyname, function


def _install_commands(namespace):
    """Adds one function per registry command to `namespace`; returns their names."""
    names = []
    for cmd in _REGISTRY:
        pyname, function = _make_function(cmd)
        function.__module__ = "ndtwin"
        namespace[pyname] = function
        names.append(pyname)
    return names
