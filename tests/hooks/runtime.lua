-- Fails at run time, with a known line, two calls deep.
local function field_of(x)
  return x.field
end

function broken(n)
  return field_of(nil) + n
end

function raise_table()
  error({code = 7})
end

function raise_multiline()
  error("first line\nsecond line", 0)
end
