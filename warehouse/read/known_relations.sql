-- Every table and view a query may name: (database, schema, name), lower-cased, internal catalogs included.
SELECT lower(database_name), lower(schema_name), lower(table_name) FROM duckdb_tables()
UNION ALL
SELECT lower(database_name), lower(schema_name), lower(view_name) FROM duckdb_views()
