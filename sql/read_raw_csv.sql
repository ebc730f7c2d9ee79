-- The typed read of one raw table, shared by every staging view (sql/stg_*.sql): header-less CSV,
-- each column named and typed as RAW_COLUMNS in stragglers/trace_formats.py says (DuckDB never
-- guesses types on the real trace), empty field = NULL, each row with its file's name.
read_csv('${files}',
    header = false, delim = ',', quote = '"', escape = '"', nullstr = '',
    compression = '${compression}', auto_detect = false, filename = true,
    columns = {${columns}})
