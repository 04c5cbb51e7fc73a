"""The connector's Protobuf codec against Google's protobuf, on generated cases (issue 51).

Seeded, deterministic generation of `.proto` schemas and messages: proto2 and proto3, nested messages, maps, enums
(unknown numbers in open and closed enums), oneofs, Google's well-known types imported, proto2 defaults, packed and
unpacked repeated fields, every integer encoding at its extremes, NaN/-0.0/infinities, non-BMP strings, bytes; a
message field written twice (protobuf merges it); each schema also in a second version (fields added and removed),
read both ways. Google's side: protoc (grpc_tools.protoc) compiles the protoc-style text, and Google's Python runtime
writes every message and reads every message the connector writes. The connector's side reads the schema text as a
registry holds it: the same protoc-style text (comments, options, reserved, package after the messages), or as AWS's
Java serializer registers it (map fields as `repeated ...Entry` messages with `option map_entry = true`).

Frames are Glue Schema Registry bodies (`framing=none`: the message index as AWS's Java serde computes it, the
messages of the file sorted by full name, then the message); the header is the framing suites' concern. Every case of
one run goes through one Spark job: all schemas side by side as columns. A failure prints the seed
(PROTOBUF_REFERENCE_SEED reruns it), the schema text, and the value both sides read.
"""
from __future__ import annotations

import math
import os
import random
import struct
import subprocess
import sys
import tempfile
from decimal import Decimal
from pathlib import Path

import pytest

pytest.importorskip("grpc_tools")

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory  # noqa: E402
from google.protobuf.descriptor import FieldDescriptor as FD  # noqa: E402
from pyspark.sql import functions as F  # noqa: E402
from pyspark.sql.types import BinaryType, IntegerType, StructField, StructType  # noqa: E402

from conftest import pyspark_line  # noqa: E402
from spark_kinesis import from_glue_schema_registry, to_glue_schema_registry  # noqa: E402

SEED = int(os.environ.get("PROTOBUF_REFERENCE_SEED", "5151"))
# Generated schemas (each in two versions). The codec is one Scala source for every jar: the default line runs the
# 40, the 3.5 line (whose jar is its own build) the first 10 of them, where one wide plan of 160 columns took Spark
# 3.5 two minutes; `make test-full` runs the 40 everywhere.
SCHEMAS = 40 if pyspark_line() >= (4, 0) or os.environ.get("SPARK_KINESIS_ALL_SUITES") else 10
MESSAGES = 12  # messages per schema and version

SCALARS = ["double", "float", "int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64",
           "sfixed32", "sfixed64", "bool", "string", "bytes"]
MAP_KEYS = ["int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "sfixed32", "sfixed64",
            "bool", "string"]
PACKABLE = set(SCALARS) - {"string", "bytes"}
RANGES = {
    "int32": (-2**31, 2**31 - 1), "sint32": (-2**31, 2**31 - 1), "sfixed32": (-2**31, 2**31 - 1),
    "int64": (-2**63, 2**63 - 1), "sint64": (-2**63, 2**63 - 1), "sfixed64": (-2**63, 2**63 - 1),
    "uint32": (0, 2**32 - 1), "fixed32": (0, 2**32 - 1), "uint64": (0, 2**64 - 1), "fixed64": (0, 2**64 - 1),
}
# Well-known types: (import, full name).
WKT = [("google/protobuf/timestamp.proto", "google.protobuf.Timestamp"),
       ("google/protobuf/duration.proto", "google.protobuf.Duration"),
       ("google/protobuf/wrappers.proto", "google.protobuf.Int64Value"),
       ("google/protobuf/wrappers.proto", "google.protobuf.StringValue"),
       ("google/protobuf/wrappers.proto", "google.protobuf.UInt64Value"),
       ("google/protobuf/wrappers.proto", "google.protobuf.BytesValue"),
       ("google/protobuf/wrappers.proto", "google.protobuf.DoubleValue"),
       ("google/protobuf/wrappers.proto", "google.protobuf.BoolValue"),
       ("google/protobuf/empty.proto", "google.protobuf.Empty"),
       ("google/protobuf/field_mask.proto", "google.protobuf.FieldMask"),
       ("google/protobuf/any.proto", "google.protobuf.Any")]
TEXTS = ["", "a", "Zoë ✓", "😀 non-BMP 𝄞", "line\nbreak\t\"quoted\"", "x" * 70, "\u0000nul"]


# ---- the schema model ----------------------------------------------------------------------------------------------

class Field:
    def __init__(self, name, number, kind, type_, label="", oneof=None, packed=None, default=None, key=None):
        self.name, self.number, self.kind, self.type, self.label = name, number, kind, type_, label
        self.oneof, self.packed, self.default, self.key = oneof, packed, default, key


class Message:
    def __init__(self, name):
        self.name, self.fields, self.nested, self.reserved = name, [], [], []


class Schema:
    """One generated `.proto` file: `root` (with nested messages), a second top-level message, one enum."""

    def __init__(self, case, syntax, rng):
        self.case, self.syntax, self.package = case, syntax, f"gen{case}.v"
        self.rng, self.imports, self.root = rng, set(), Message("Root")
        self.other = Message("Other")
        self.other.fields.append(Field("note", 1, "scalar", "string", "optional" if syntax == "proto2" else ""))
        first = 0 if syntax == "proto3" or rng.random() < 0.5 else 1
        self.enum = [(f"E{case}_{n}", first + n) for n in range(3)]
        self.style = rng.choice(["protoc", "aws"])
        self.package_last = rng.random() < 0.2
        self.groups = syntax == "proto2" and rng.random() < 0.3


def _label(schema, rng, allow_required=True):
    if schema.syntax == "proto3":
        return rng.choice(["", "", "optional", "repeated"])
    return rng.choice(["optional", "optional", "repeated"] + (["required"] if allow_required else []))


def generate(case, rng):
    schema = Schema(case, rng.choice(["proto3", "proto2"]), rng)
    numbers = iter(rng.sample(range(1, 60), 40) + list(range(100, 140)))
    inner = Message("Inner")
    for i, t in enumerate(rng.sample(SCALARS, 3)):
        inner.fields.append(Field(f"i{i}", i + 1, "scalar", t, "optional" if schema.syntax == "proto2" else
                                  rng.choice(["", "repeated"])))
    inner.fields.append(Field("tags", 4, "scalar", "int32", "repeated"))
    schema.root.nested.append(inner)
    leaf = Message("Leaf")  # nested two deep: Root.Inner.Leaf
    leaf.fields.append(Field("v", 1, "scalar", "sint64", "optional" if schema.syntax == "proto2" else ""))
    inner.nested.append(leaf)
    inner.fields.append(Field("leaf", 5, "message", "Inner.Leaf", "optional" if schema.syntax == "proto2" else ""))
    fields = schema.root.fields
    for t in rng.sample(SCALARS, rng.randint(5, 12)):
        label = _label(schema, rng)
        f = Field(f"s_{t}_{len(fields)}", next(numbers), "scalar", t, label)
        if label == "repeated" and t in PACKABLE and rng.random() < 0.5:
            f.packed = schema.syntax == "proto2"  # proto2 packs on request, proto3 unpacks on request
        if schema.syntax == "proto2" and label == "optional" and rng.random() < 0.5:
            f.default = _default_text(t, rng)
        fields.append(f)
    enum_label = _label(schema, rng)
    e = Field(f"kind_{len(fields)}", next(numbers), "enum", "Kind", enum_label)
    if schema.syntax == "proto2" and enum_label == "optional" and rng.random() < 0.5:
        e.default = schema.enum[-1][0]
    fields.append(e)
    fields.append(Field(f"kinds_{len(fields)}", next(numbers), "enum", "Kind", "repeated"))
    fields.append(Field(f"inner_{len(fields)}", next(numbers), "message", "Inner", _label(schema, rng, False)))
    fields.append(Field(f"inners_{len(fields)}", next(numbers), "message", "Inner", "repeated"))
    for _ in range(rng.randint(1, 3)):
        key = rng.choice(MAP_KEYS)
        value = rng.choice(["scalar", "message"] + (["enum"] if schema.syntax == "proto3" and
                                                        schema.enum[0][1] == 0 else []))
        vt = rng.choice(SCALARS) if value == "scalar" else ("Inner" if value == "message" else "Kind")
        fields.append(Field(f"map_{len(fields)}", next(numbers), "map", vt, "repeated", key=key))
        fields[-1].value_kind = value
    for _ in range(rng.randint(0, 3)):
        path, name = rng.choice(WKT)
        schema.imports.add(path)
        fields.append(Field(f"wkt_{len(fields)}", next(numbers), "message", "." + name,
                            "optional" if schema.syntax == "proto2" else rng.choice(["", "repeated"])))
    if rng.random() < 0.6:
        group = f"choice_{len(fields)}"
        for t in rng.sample(SCALARS, 2):
            fields.append(Field(f"{group}_{t}", next(numbers), "scalar", t, "", oneof=group))
        fields.append(Field(f"{group}_inner", next(numbers), "message", "Inner", "", oneof=group))
    if schema.groups:
        fields.append(Field(f"Grp{len(fields)}", next(numbers), "group", None, "optional"))
    schema.root.reserved = [next(numbers), next(numbers)]
    rng.shuffle(fields)
    return schema


def evolve(schema, rng):
    """The next version: a field or two removed (their numbers reserved), one or two added."""
    import copy
    v2 = copy.deepcopy(schema)
    v2.rng = rng
    removable = [f for f in v2.root.fields if f.label != "required" and f.oneof is None and f.kind != "group"]
    for f in rng.sample(removable, min(2, len(removable))):
        v2.root.fields.remove(f)
        v2.root.reserved.append(f.number)
    used = {f.number for f in v2.root.fields} | set(v2.root.reserved)
    free = [n for n in range(200, 260) if n not in used]
    for i in range(rng.randint(1, 2)):
        t = rng.choice(SCALARS)
        label = "repeated" if rng.random() < 0.3 else ("optional" if schema.syntax == "proto2" else "")
        v2.root.fields.append(Field(f"added_{i}_{t}", free[i], "scalar", t, label))
    return v2


def _default_text(t, rng):
    if t in RANGES:
        lo, hi = RANGES[t]
        n = rng.choice([lo, hi, 0, 7, rng.randint(lo, hi)])
        return hex(n) if n >= 0 and rng.random() < 0.3 else str(n)
    if t in ("float", "double"):
        return rng.choice(["inf", "-inf", "nan", "1.5", "-0.25", "1e10"])
    if t == "bool":
        return rng.choice(["true", "false"])
    if t == "string":
        return '"d\\nq\\"x"'
    return '"\\001\\377b"'


# ---- rendering -----------------------------------------------------------------------------------------------------

def entry_name(field_name):
    return "".join(p[:1].upper() + p[1:] for p in field_name.split("_") if p) + "Entry"


def render(schema, for_protoc):
    """The `.proto` text: for protoc (map<K, V>, package first), or as the registry holds it (schema.style)."""
    aws = not for_protoc and schema.style == "aws"
    opt = "optional " if schema.syntax == "proto2" else ""
    out = [f'// generated case {schema.case} (seed {SEED})', f'syntax = "{schema.syntax}";']
    if for_protoc or not schema.package_last:
        out.append(f"package {schema.package};")
    out += [f'import "{i}";' for i in sorted(schema.imports)]
    out.append('option java_multiple_files = true; /* an option Google reads and the connector reads past */')

    def field_line(f, indent):
        pad = " " * indent
        label = f"{f.label} " if f.label else ""
        options = []
        if f.packed is not None:
            options.append(f"packed = {'true' if f.packed else 'false'}")
        if f.default is not None:
            options.append(f"default = {f.default}")
        if not options and f.kind == "scalar" and schema.rng.random() < 0.1:
            options.append("deprecated = true")
        suffix = f" [{', '.join(options)}]" if options else ""
        if f.kind == "map":
            if aws:
                return [f"{pad}repeated {entry_name(f.name)} {f.name} = {f.number};"]
            return [f"{pad}map<{f.key}, {f.type}> {f.name} = {f.number};"]
        if f.kind == "group":
            return [f"{pad}optional group {f.name} = {f.number} {{",
                    f"{pad}  optional int32 g = 1;", f"{pad}}}"]
        return [f"{pad}{label}{f.type} {f.name} = {f.number}{suffix};  // field {f.number}"]

    def message(m, indent):
        pad = " " * indent
        lines = [f"{pad}message {m.name} {{"]
        if m.reserved:
            lines.append(f"{pad}  reserved {', '.join(str(n) for n in sorted(m.reserved))};")
        oneofs = {}
        for f in m.fields:
            if f.oneof:
                if f.oneof not in oneofs:
                    oneofs[f.oneof] = []
                    lines.append(f"{pad}  oneof {f.oneof} {{")
                    lines += [ln for g in m.fields if g.oneof == f.oneof for ln in field_line(g, indent + 4)]
                    lines.append(f"{pad}  }}")
            else:
                lines += field_line(f, indent + 2)
        for n in m.nested:
            lines += message(n, indent + 2)
        if aws:
            for f in m.fields:
                if f.kind == "map":
                    lines += [f"{pad}  message {entry_name(f.name)} {{", f"{pad}    option map_entry = true;",
                              f"{pad}    {opt}{f.key} key = 1;", f"{pad}    {opt}{f.type} value = 2;", f"{pad}  }}"]
        lines.append(f"{pad}}}")
        return lines

    out += message(schema.root, 0)
    if not for_protoc and schema.package_last:  # declared after Root: it still qualifies Root too
        out.append(f"package {schema.package};")
    out += message(schema.other, 0)
    out.append("/* the enum, after the messages that use it */")
    out.append("enum Kind {")
    out += [f"  {n} = {v};" for n, v in schema.enum]
    out.append("}")
    return "\n".join(out) + "\n"


# ---- Google's side -------------------------------------------------------------------------------------------------

def compile_all(texts):
    """Every text through protoc in one run; the pool of their descriptors (imports included)."""
    import grpc_tools

    include = str(Path(grpc_tools.__file__).parent / "_proto")
    with tempfile.TemporaryDirectory() as d:
        names = []
        for name, text in texts.items():
            Path(d, name).write_text(text, encoding="utf-8")
            names.append(name)
        out = Path(d, "set.pb")
        # protoc in a child process: its errors go to stderr, which the test shows.
        run = subprocess.run([sys.executable, "-m", "grpc_tools.protoc", f"-I{d}", f"-I{include}", "--include_imports",
                              f"--descriptor_set_out={out}"] + names, capture_output=True, text=True)
        assert run.returncode == 0, f"protoc refused a generated schema (seed {SEED}): {run.stderr}"
        files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    pool = descriptor_pool.DescriptorPool()
    for f in files.file:
        pool.Add(f)
    return pool


def message_index(file_descriptor, full_name):
    """AWS's Java serde's message index: the file's messages (nested and map entries too) sorted by full name."""
    names = []

    def walk(d):
        names.append(d.full_name)
        for n in d.nested_types:
            walk(n)

    for d in file_descriptor.message_types_by_name.values():
        walk(d)
    return sorted(names).index(full_name)


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def scalar_value(t, rng):
    if t in RANGES:
        lo, hi = RANGES[t]
        return rng.choice([lo, hi, 0, -1 if lo < 0 else 1, rng.randint(lo, hi), rng.randint(-300, 300)
                           if lo < 0 else rng.randint(0, 300)])
    if t == "double":
        return rng.choice([math.nan, -0.0, 0.0, math.inf, -math.inf, 5e-324, 1.7976931348623157e308,
                           rng.uniform(-1e6, 1e6)])
    if t == "float":
        v = rng.choice([math.nan, -0.0, math.inf, -math.inf, 3.4028234663852886e38, 1.401298464324817e-45,
                        rng.uniform(-1e4, 1e4)])
        return struct.unpack("<f", struct.pack("<f", v))[0]
    if t == "bool":
        return rng.random() < 0.5
    if t == "string":
        return rng.choice(TEXTS)
    return bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 5, 33])))


def fill(msg, rng, depth=0, unknown_enums=True):
    """Sets a random subset of `msg`'s fields; returns raw bytes to append (closed enums' unknown numbers)."""
    extra = b""
    d = msg.DESCRIPTOR
    for f in d.fields:
        if f.containing_oneof is not None and rng.random() < 0.5:
            continue
        if rng.random() < 0.25 and not f.is_required:
            continue
        if f.type == FD.TYPE_GROUP:
            getattr(msg, f.name).g = rng.randint(-5, 5)
            continue
        repeated = f.is_repeated
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            key_f, value_f = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
            m = getattr(msg, f.name)
            for _ in range(rng.randint(0, 3)):
                k = scalar_value(FD_NAMES[key_f.type], rng)
                if value_f.message_type is not None:
                    fill(m[k], rng, depth + 1, unknown_enums=False)
                elif value_f.enum_type is not None:
                    m[k] = rng.choice([v.number for v in value_f.enum_type.values] + [77])
                else:
                    m[k] = scalar_value(FD_NAMES[value_f.type], rng)
            continue
        count = rng.randint(0, 4) if repeated else 1
        for _ in range(count):
            if f.message_type is not None:
                if depth > 3:
                    break
                sub = getattr(msg, f.name).add() if repeated else getattr(msg, f.name)
                if f.message_type.full_name == "google.protobuf.Any":
                    sub.type_url = "type.googleapis.com/x.Y"
                    sub.value = scalar_value("bytes", rng)
                else:
                    extra_sub = fill(sub, rng, depth + 1, unknown_enums=False)
                    assert not extra_sub
                sub.SetInParent()
            elif f.enum_type is not None:
                numbers = [v.number for v in f.enum_type.values]
                closed = f.enum_type.is_closed
                if unknown_enums and not f.is_required and rng.random() < 0.2:
                    if closed:  # Google refuses to set it: the bytes carry it, as another writer's would
                        extra += varint(f.number << 3) + varint(88)
                        continue
                    v = 88
                else:
                    v = rng.choice(numbers)
                if repeated:
                    getattr(msg, f.name).append(v)
                else:
                    setattr(msg, f.name, v)
            else:
                v = scalar_value(FD_NAMES[f.type], rng)
                if repeated:
                    getattr(msg, f.name).append(v)
                else:
                    setattr(msg, f.name, v)
    return extra


FD_NAMES = {FD.TYPE_DOUBLE: "double", FD.TYPE_FLOAT: "float", FD.TYPE_INT32: "int32", FD.TYPE_INT64: "int64",
            FD.TYPE_UINT32: "uint32", FD.TYPE_UINT64: "uint64", FD.TYPE_SINT32: "sint32", FD.TYPE_SINT64: "sint64",
            FD.TYPE_FIXED32: "fixed32", FD.TYPE_FIXED64: "fixed64", FD.TYPE_SFIXED32: "sfixed32",
            FD.TYPE_SFIXED64: "sfixed64", FD.TYPE_BOOL: "bool", FD.TYPE_STRING: "string", FD.TYPE_BYTES: "bytes"}


def expected(msg):
    """The row the connector should read `msg` (parsed by Google) as: docs/schema-registry.md's mapping."""
    out = {}
    for f in msg.DESCRIPTOR.fields:
        if f.type == FD.TYPE_GROUP:
            continue  # read past: no column
        value = getattr(msg, f.name)
        if f.message_type is not None and f.message_type.GetOptions().map_entry:
            value_f = f.message_type.fields_by_name["value"]
            out[f.name] = {_key(k): _value(value_f, v) for k, v in value.items()}
        elif f.is_repeated:
            out[f.name] = [_value(f, v) for v in value]
        elif f.message_type is not None:
            out[f.name] = expected(value) if msg.HasField(f.name) else None
        elif f.has_presence and not msg.HasField(f.name) and not f.has_default_value:
            out[f.name] = None
        else:
            out[f.name] = _value(f, value)  # present, implicit (proto3), or absent with its [default = ...]
    return out


def _key(k):
    return _norm(k)


def _value(f, v):
    if f.message_type is not None:
        return expected(v)
    if f.enum_type is not None:
        known = f.enum_type.values_by_number.get(v)
        return known.name if known is not None else str(v)
    return _norm(v)


def _norm(v):
    """Values as both sides can compare them: floats by their text (NaN, -0.0), bytes as bytes, decimals as ints."""
    if isinstance(v, bool):
        return v
    if isinstance(v, float):
        return ("float", repr(v))
    if isinstance(v, Decimal):
        return int(v)
    if isinstance(v, (bytes, bytearray)):
        return bytes(v)
    if isinstance(v, dict):
        return {_norm(k): _norm(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_norm(x) for x in v]
    return v


def from_spark(row_dict):
    return _norm(row_dict)


# ---- the test ------------------------------------------------------------------------------------------------------

def _cases():
    rng = random.Random(SEED)
    schemas = []
    for case in range(SCHEMAS):
        v1 = generate(case, rng)
        v2 = evolve(v1, rng)
        schemas.append((v1, v2))
    return rng, schemas


@pytest.mark.compat
@pytest.mark.heavy
def test_google_writes_we_read_and_we_write_google_reads(spark):
    rng, schemas = _cases()
    texts = {}
    for v1, v2 in schemas:
        texts[f"gen{v1.case}_v1.proto"] = render(v1, True)
        texts[f"gen{v1.case}_v2.proto"] = render(v2, True)
    # Two versions of one package cannot share a pool: each version compiles in a pool of its own.
    pool1 = compile_all({k: v for k, v in texts.items() if k.endswith("_v1.proto")})
    pool2 = compile_all({k: v for k, v in texts.items() if k.endswith("_v2.proto")})
    columns, options, plans = [], {}, []
    payloads = {}
    counts = {"decode": 0, "encode": 0, "evolution": 0}
    for v1, v2 in schemas:
        name = f"{v1.package}.Root"
        for version, schema, pool, reader in (("v1", v1, pool1, v1), ("v2", v2, pool2, v2),
                                              ("v1->v2", v1, pool1, v2), ("v2->v1", v2, pool2, v1)):
            cls = message_factory.GetMessageClass(pool.FindMessageTypeByName(name))
            reader_pool = pool1 if reader is v1 else pool2
            reader_cls = message_factory.GetMessageClass(reader_pool.FindMessageTypeByName(name))
            index = message_index(reader_pool.FindFileByName(f"gen{reader.case}_{'v1' if reader is v1 else 'v2'}"
                                                             ".proto"), name)
            bodies, wants = [], []
            for i in range(MESSAGES):
                m = cls()
                extra = fill(m, rng)
                body = m.SerializeToString() + extra
                if i % 4 == 3:  # a message field twice: Google merges the two
                    inner = [f for f in m.DESCRIPTOR.fields if f.message_type is not None and
                             not f.is_repeated and not f.message_type.GetOptions().map_entry and
                             f.message_type.name == "Inner" and f.containing_oneof is None]
                    if inner:
                        part = m.__class__.DESCRIPTOR.fields_by_name[inner[0].name].message_type
                        sub = message_factory.GetMessageClass(part)()
                        fill(sub, rng, 1, unknown_enums=False)
                        raw = sub.SerializeToString()
                        body += varint(inner[0].number << 3 | 2) + varint(len(raw)) + raw
                google = reader_cls.FromString(body)
                bodies.append(varint(index) + body)
                wants.append(expected(google))
            column = f"c{len(columns)}"
            columns.append(column)
            payloads[column] = bodies
            options[column] = {"schemaDefinition": render(reader, False), "dataFormat": "protobuf",
                               "framing": "none", "protobufMessageName": "Root", "region": "us-east-1"}
            plans.append((column, version, reader, reader_cls, index, wants))
            counts["evolution" if "->" in version else "decode"] += MESSAGES
            if "->" not in version:
                counts["encode"] += MESSAGES

    rows = [[i] + [payloads[c][i] for c in columns] for i in range(MESSAGES)]
    df = spark.createDataFrame(rows, StructType([StructField("i", IntegerType())] +
                                                [StructField(c, BinaryType()) for c in columns]))
    mismatches, selected, readable = [], [F.col("i")], []
    for plan in plans:
        column, version, reader = plan[:3]
        try:
            decoded = from_glue_schema_registry(F.col(column), options[column])
            columns_of_plan = [decoded.alias(f"{column}_row")]
            if "->" not in version:
                columns_of_plan.append(
                    to_glue_schema_registry(decoded, None, options[column]).alias(f"{column}_bytes"))
        except Exception as e:  # a schema Google reads and the connector refuses
            mismatches.append(f"{version} case {reader.case}: refused: {str(e)[:400]}\nschema:\n"
                              f"{options[column]['schemaDefinition']}")
            continue
        selected += columns_of_plan
        readable.append(plan)
    got = _collect(df, selected, readable, mismatches, options)

    for column, version, reader, reader_cls, index, wants in readable:
        if column not in got:
            continue
        for i, want in enumerate(wants):
            row = got[column][i]
            ours = from_spark(row[f"{column}_row"].asDict(recursive=True))
            if ours != want:
                mismatches.append(f"{version} case {reader.case} message {i}: we read {ours}\nGoogle read {want}\n"
                                  f"schema:\n{options[column]['schemaDefinition']}")
                continue
            if "->" in version:
                continue
            written = bytes(row[f"{column}_bytes"])
            assert written[:len(varint(index))] == varint(index), f"{version} case {reader.case}: message index"
            back = expected(reader_cls.FromString(written[len(varint(index)):]))
            if back != want:
                mismatches.append(f"{version} case {reader.case} message {i}: we wrote what Google reads as {back}\n"
                                  f"expected {want}\nschema:\n{options[column]['schemaDefinition']}")
    print(f"protobuf reference cases (seed {SEED}): {SCHEMAS} schemas x 2 versions; {counts}")
    report = os.environ.get("PROTOBUF_REFERENCE_REPORT")
    if report:  # every mismatch, for a closing note
        Path(report).write_text("\n\n".join(mismatches), encoding="utf-8")
    assert not mismatches, f"{len(mismatches)} mismatches (seed {SEED}; PROTOBUF_REFERENCE_SEED reruns):\n" + \
        "\n\n".join(mismatches[:3])


def _collect(df, selected, plans, mismatches, options):
    """Every column in one job; if that fails, each schema alone, so that the failure names its case."""
    try:
        rows = sorted(df.select(*selected).collect(), key=lambda r: r["i"])
        return {plan[0]: rows for plan in plans}
    except Exception:
        got = {}
        for column, version, reader, *_ in plans:
            cols = [c for c in selected[1:] if f"{column}_" in str(c)]
            try:
                got[column] = sorted(df.select(F.col("i"), *cols).collect(), key=lambda r: r["i"])
            except Exception as e:
                mismatches.append(f"{version} case {reader.case}: failed: {str(e)[:600]}\nschema:\n"
                                  f"{options[column]['schemaDefinition']}")
        return got


REFUSED = [
    ('syntax = "proto3";\nimport "google/type/date.proto";\nmessage A { google.type.Date d = 1; }\n',
     "'google/type/date.proto' is one of Google's common protos"),
    ('syntax = "proto3";\nimport "other/thing.proto";\nmessage A { int32 x = 1; }\n', "'other/thing.proto' is another"),
    ('edition = "2023";\nmessage A { int32 x = 1; }\n', "Protobuf editions"),
    ('syntax = "proto3";\nmessage A { A next = 1; }\n', "contains itself"),
    ('syntax = "proto3";\nimport "google/protobuf/struct.proto";\nmessage A { google.protobuf.Struct s = 1; }\n',
     "contains itself"),
]


@pytest.mark.parametrize("text,why", REFUSED, ids=["google-type", "other-file", "edition", "recursive", "struct"])
def test_what_is_refused_is_refused_by_name(spark, text, why):
    with pytest.raises(Exception) as e:
        from_glue_schema_registry(F.col("data"), {"schemaDefinition": text, "dataFormat": "protobuf",
                                                  "framing": "none", "region": "us-east-1"})
    assert "[KINESIS_INVALID_SCHEMA]" in str(e.value) and why in str(e.value)


@pytest.fixture(scope="module")
def glue(tmp_path_factory):
    """moto's Glue, and a registry of this module's own."""
    from harness import moto

    with moto.glue_registry(Path(tmp_path_factory.mktemp("moto-glue-proto")), f"proto-ref-{os.getpid()}") as glue:
        yield glue


WKT_PROTO = """syntax = "proto3";
package audit;
import "google/protobuf/timestamp.proto";
import "google/protobuf/wrappers.proto";

// As a producer's protoc compiles it; registered with its final newline, as AWS's serializers register text.
message Event {
  string id = 1;
  google.protobuf.Timestamp occurred_at = 2;
  google.protobuf.Int64Value amount = 3;
  map<string, string> attrs = 4;
}
"""


@pytest.mark.compat
def test_a_registered_schema_with_well_known_types_both_ways_in_glue_frames(spark, glue):
    """The text ends with a newline: the lookup by definition (moto compares it exactly) finds the version. Frames
    with the 18-byte header and the message index, written by Google and read by the connector, and the other way."""
    import uuid

    from aws_schema_registry.codec import encode as frame

    endpoint, client, registry = glue
    name = f"events-{uuid.uuid4().hex[:8]}"
    version = client.create_schema(RegistryId={"RegistryName": registry}, SchemaName=name, DataFormat="PROTOBUF",
                                   Compatibility="BACKWARD", SchemaDefinition=WKT_PROTO)["SchemaVersionId"]
    pool = compile_all({"audit_event.proto": WKT_PROTO})
    Event = message_factory.GetMessageClass(pool.FindMessageTypeByName("audit.Event"))
    events = []
    for i in range(6):
        e = Event(id=f"e{i}")
        if i % 2:
            e.occurred_at.seconds, e.occurred_at.nanos = 1_700_000_000 + i, i * 1000
            e.amount.value = -(2 ** 63) if i == 3 else i
        e.attrs["k"] = "😀" * i
        events.append(e)
    index = message_index(pool.FindFileByName("audit_event.proto"), "audit.Event")
    df = spark.createDataFrame([(frame(varint(index) + e.SerializeToString(), uuid.UUID(version)),) for e in events],
                               "data binary")
    options = {"registryEndpointUrl": endpoint, "region": "us-east-1", "awsAccessKeyId": "local-test-key",
               "awsSecretKey": "local-test-secret", "registryName": registry, "schemaName": name}
    decoded = df.select(from_glue_schema_registry("data", options).alias("e"))
    rows = sorted((r["e"].asDict(recursive=True) for r in decoded.collect()), key=lambda r: r["id"])
    assert [_norm(r) for r in rows] == [expected(e) for e in events]

    # Encoding with the definition given: the version is found by its exact text, final newline included.
    written = decoded.select(to_glue_schema_registry("e", WKT_PROTO, dict(options, dataFormat="protobuf"))
                             .alias("data")).collect()
    back = []
    for r in written:
        payload = bytes(r["data"])
        assert payload[:2] == b"\x03\x00" and uuid.UUID(bytes=payload[2:18]) == uuid.UUID(version)
        assert payload[18:18 + len(varint(index))] == varint(index)
        back.append(Event.FromString(payload[18 + len(varint(index)):]))
    assert sorted(back, key=lambda e: e.id) == events
