ALTER TABLE orders ADD COLUMN customer text;
