"""How the report's page is written: numbers in words, one look per method, table views, Markdown
tables and images, figures, the glossary, report.html, files published by rename, the code digest."""
