-- A hook that keeps state and saves it: save_state() returns every kind of
-- value a saved state may hold; check() says whether restore_state() got
-- them back exactly.
count = 0
local hidden = 0

function step(n)
  count = count + 1
  hidden = hidden * 3 + n
  return hidden + count / 8
end

local function sample()
  return {
    count = count, hidden = hidden, tiny = 2 ^ -1074, neg_zero = -0.0, inf = 1 / 0,
    ninf = -1 / 0, nan = 0 / 0, third = 1 / 3, low = math.mininteger, high = math.maxinteger,
    text = "a\0b\"\\\n\255", flag = false, list = {1, {2.5, {"three"}}}, [7] = "seven",
    [true] = 1, [0.5] = "half",
  }
end

function save_state()
  return sample()
end

local restored
function restore_state(state)
  restored = state
  count = state.count
  hidden = state.hidden
end

-- 1 when the restored value is the saved one, bit for bit and type for type.
function check()
  local want, got = sample(), restored
  local function same(a, b)
    if type(a) ~= type(b) then return false end
    if type(a) == "number" then
      if math.type(a) ~= math.type(b) then return false end
      if a ~= a then return b ~= b end
      return a == b and 1 / a == 1 / b
    end
    if type(a) ~= "table" then return a == b end
    for k, v in pairs(a) do if not same(v, b[k]) then return false end end
    for k in pairs(b) do if a[k] == nil then return false end end
    return true
  end
  return same(want, got) and 1 or 0
end
