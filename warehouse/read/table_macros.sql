-- The warehouse's own table macros (e.g. entity_extractors()), which a query may call like a table function.
SELECT DISTINCT lower(function_name) FROM duckdb_functions() WHERE function_type = 'table_macro' AND NOT internal
