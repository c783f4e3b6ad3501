-- The sandbox's f32(x): the C side checks it against a (float) cast; here,
-- against the float rounding of string.pack.
function f32_of(x) return f32(x) end
function agrees_with_pack(x)
  return f32(x) == string.unpack("f", string.pack("f", x)) and 1 or 0
end
function f32_of_text() return f32("x") end
