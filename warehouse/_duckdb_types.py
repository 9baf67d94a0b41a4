"""DuckDB column types derived from the msgspec records, so the format is declared once."""
from __future__ import annotations

import msgspec
from msgspec import inspect as mi


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _struct_fields(info: mi.StructType) -> dict[str, str]:
    return {f.encode_name: duckdb_type(f.type) for f in info.fields}


def duckdb_type(info: mi.Type) -> str:
    """The DuckDB type that read_json should parse a value of this msgspec type as."""
    if isinstance(info, mi.UnionType):
        members = [t for t in info.types if not isinstance(t, mi.NoneType)]
        structs = [t for t in members if isinstance(t, mi.StructType)]
        if len(structs) == len(members) > 1:
            return _merged_tagged_union(structs)
        if len(members) == 1:
            return duckdb_type(members[0])
        if {type(t) for t in members} <= {mi.IntType, mi.FloatType}:
            return "DOUBLE"
        return "JSON"
    if isinstance(info, (mi.StrType, mi.LiteralType)):
        return "VARCHAR"
    if isinstance(info, mi.IntType):
        return "BIGINT"
    if isinstance(info, mi.FloatType):
        return "DOUBLE"
    if isinstance(info, mi.BoolType):
        return "BOOLEAN"
    if isinstance(info, (mi.DictType, mi.AnyType)):
        return "JSON"
    if isinstance(info, mi.ListType):
        return duckdb_type(info.item_type) + "[]"
    if isinstance(info, mi.StructType):
        fields = _struct_fields(info)
        if info.tag_field:
            fields = {info.tag_field: "VARCHAR", **fields}
        return "STRUCT(" + ", ".join(f"{_quote(k)} {v}" for k, v in fields.items()) + ")"
    raise TypeError(f"no DuckDB type for {info!r}")


def _merged_tagged_union(members: list[mi.StructType]) -> str:
    # The warehouse stores every step kind in one table: the union's fields, merged by name.
    merged: dict[str, str] = {str(members[0].tag_field): "VARCHAR"}
    for member in members:
        for name, type_ in _struct_fields(member).items():
            if merged.setdefault(name, type_) != type_:
                raise TypeError(f"step field {name!r} has conflicting types {merged[name]} / {type_}")
    return "STRUCT(" + ", ".join(f"{_quote(k)} {v}" for k, v in merged.items()) + ")"


def read_json_columns(record_type: type[msgspec.Struct]) -> dict[str, str]:
    """`columns=` for read_json: top-level field name -> DuckDB type."""
    info = mi.type_info(record_type)
    assert isinstance(info, mi.StructType)
    return _struct_fields(info)
