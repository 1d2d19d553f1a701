"""Result: a command's --json document as data, tables and plots."""

import html
import json


class Fields(dict):
    """A JSON object with its keys also as attributes (``r.memory.peak_bytes_per_gpu``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(
                "no field %r; fields: %s" % (name, ", ".join(self.keys()))) from None

    def __dir__(self):
        return list(self.keys()) + list(dict.__dir__(self))


def _wrap(value):
    if isinstance(value, dict):
        return Fields((k, _wrap(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _tables(doc):
    """The top-level lists of objects of a document: {key: rows}."""
    return {k: v for k, v in doc.items()
            if isinstance(v, list) and v and all(isinstance(x, dict) for x in v)}


class Result:
    """What a command returned: its --json document.

    - ``to_dict()``: the document (a fresh dict: exactly ``ndtwin --json <command> ...``);
    - ``to_json()``: the document as the CLI prints it (byte-identical, without the final
      newline);
    - fields as attributes or items: ``r.step_time_s``, ``r["memory"]["peak_bytes_per_gpu"]``;
    - ``to_frame()``: a pandas DataFrame of its table (plan rankings, collective rows, ...);
    - ``plot()``: a matplotlib Figure of the result;
    - ``warnings``, ``notes`` and ``progress``: the lines the CLI prints on stderr (a warning's
      text after "ndtwin: warning: "; notes as printed, e.g. plan's "plan: note: <size>:
      <why it was skipped>", which the CLI prints with or without --json and no document holds).
    """

    def __init__(self, command, text, warnings=(), progress=(), args=None, notes=()):
        self.command = command
        self.warnings = list(warnings)
        self.notes = list(notes)
        self.progress = list(progress)
        self.args = dict(args or {})
        self._text = text
        self._parsed = None  # the document as Fields, parsed on first use

    @property
    def _fields(self):
        if self._parsed is None:
            self._parsed = _wrap(json.loads(self._text))
        return self._parsed

    # ---- the document ----
    def to_json(self):
        """The --json document as the CLI prints it (indent 2), without the final newline."""
        return self._text

    def to_dict(self):
        """The --json document as a new dict (the same schema and numbers as the CLI's)."""
        return json.loads(self._text)

    @property
    def schema(self):
        return self._fields.get("schema") if isinstance(self._fields, dict) else None

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if "_text" not in self.__dict__:
            raise AttributeError(name)
        fields = self._fields
        if isinstance(fields, dict) and name in fields:
            return fields[name]
        raise AttributeError("%s result has no field %r; fields: %s" % (
            self.command, name, ", ".join(fields.keys()) if isinstance(fields, dict) else ""))

    def __getitem__(self, key):
        return self._fields[key]

    def __contains__(self, key):
        return key in self._fields

    def keys(self):
        return self._fields.keys()

    def __dir__(self):
        return list(self._fields.keys()) + list(object.__dir__(self))

    def __eq__(self, other):
        return isinstance(other, Result) and self._text == other._text

    def __hash__(self):
        return hash(self._text)

    def __repr__(self):
        scalars = [(k, v) for k, v in self._fields.items()
                   if k not in ("schema", "ndtwin_version") and isinstance(v, (int, float, str))
                   and not isinstance(v, bool)][:6]
        inner = ", ".join("%s=%r" % kv for kv in scalars)
        return "<ndtwin %s result%s>" % (self.command, ": " + inner if inner else "")

    # ---- tables ----
    def tables(self):
        """The names of the document's tables (top-level lists of objects)."""
        return list(_tables(self._fields).keys())

    def to_frame(self, table=None):
        """A pandas DataFrame: the rows of `table` (default: the document's largest table, such
        as plan train's "results" or collective's "rows"; nested objects become dotted
        columns), or, for a document without a table (train, infer), one row of its fields."""
        import pandas as pd

        doc = self.to_dict()
        tables = _tables(doc)
        if table is None and tables:
            table = max(tables, key=lambda k: len(tables[k]))
        if table is None:
            return pd.json_normalize(doc)
        if table not in tables:
            raise KeyError("no table %r; tables: %s" % (table, ", ".join(tables)))
        rows = tables[table]
        # A table of tables (validate's suites, each with its "rows"): one row per inner row,
        # with the outer row's plain fields as columns ("suite").
        inner = [k for k in ("rows",) if all(
            isinstance(r.get(k), list) and all(isinstance(x, dict) for x in r[k]) for r in rows)]
        if inner:
            meta = [k for k, v in rows[0].items() if isinstance(v, (str, int, float, bool))]
            inner_keys = {k for r in rows for x in r[inner[0]] for k in x}
            prefix = table.rstrip("s") + "." if inner_keys & set(meta) else None
            return pd.json_normalize(rows, record_path=inner[0], meta=meta, meta_prefix=prefix)
        return pd.json_normalize(rows)

    # ---- display ----
    def _repr_html_(self):
        title = "ndtwin %s" % html.escape(self.command)
        if self.schema:
            title += " <small>(%s)</small>" % html.escape(str(self.schema))
        return "<div><b>%s</b>%s</div>" % (title, _html(self._fields, 0))

    def plot(self, **kwargs):
        """A matplotlib Figure of the result (training time and memory, collective bandwidth and
        latency, inference latency and throughput, a planner's Pareto frontier, ...)."""
        from . import _plot

        return _plot.plot(self, **kwargs)


_MAX_ROWS = 50


def _cell(v):
    if isinstance(v, float):
        return "%.6g" % v
    if v is None:
        return "&mdash;"
    return html.escape(str(v))


def _html(value, depth):
    if isinstance(value, dict):
        rows = []
        for k, v in value.items():
            if isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
                inner = _html_table(v, depth)
            elif isinstance(v, list):
                inner = html.escape(", ".join(str(x) for x in v))
            elif isinstance(v, dict):
                inner = _html(v, depth + 1) if depth < 3 else html.escape(json.dumps(v))
            else:
                inner = _cell(v)
            rows.append("<tr><th style='text-align:left;vertical-align:top'>%s</th>"
                        "<td style='text-align:left'>%s</td></tr>" % (html.escape(k), inner))
        return "<table>%s</table>" % "".join(rows)
    return _cell(value)


def _html_table(rows, depth):
    cols = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    head = "".join("<th>%s</th>" % html.escape(c) for c in cols)
    body = []
    for r in rows[:_MAX_ROWS]:
        cells = []
        for c in cols:
            v = r.get(c)
            if isinstance(v, (dict, list)):
                cells.append("<td>%s</td>" % html.escape(json.dumps(v)[:80]))
            else:
                cells.append("<td>%s</td>" % _cell(v))
        body.append("<tr>%s</tr>" % "".join(cells))
    more = ("<tr><td colspan=%d>... %d more rows</td></tr>" % (len(cols), len(rows) - _MAX_ROWS)
            if len(rows) > _MAX_ROWS else "")
    return "<table><tr>%s</tr>%s%s</table>" % (head, "".join(body), more)
