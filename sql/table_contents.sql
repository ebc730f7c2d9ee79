-- What a table holds, in two numbers (row count and a sum of row hashes): a cheap digest of its
-- contents, so an asset that reads ${table} knows when it changed (assets/common.py table_contents).
SELECT count(*), sum(hash(t)) FROM ${table} t
