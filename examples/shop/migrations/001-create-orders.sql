CREATE TABLE orders (id bigint PRIMARY KEY, placed_at timestamptz NOT NULL);
