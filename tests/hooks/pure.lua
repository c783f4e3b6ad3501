-- Hooks for test_eval.c, declared pure there (or not, to compare): each
-- counts its calls per argument, and the non-pure hooks total_calls(k) and
-- most_calls(k) read the counts of hook k (1 wave, 2 fails_at_500, 3
-- positive) back, so the test sees how often gflow called Lua. (Counting is
-- the test's instrument; it changes nothing a hook returns.)
local calls = {{}, {}, {}}

local function count(k, n)
  local key = n == n and n or "NaN" -- NaN cannot be a key
  calls[k][key] = (calls[k][key] or 0) + 1
end

function wave(n)
  count(1, n)
  return math.sin(0.01 * n) * math.exp(-0.001 * n)
end

function fails_at_500(n)
  count(2, n)
  if n == 500 then
    error("no value at 500")
  end
  return n * 0.5
end

function positive(n)
  count(3, n)
  if n < 0 then
    error("a negative argument")
  end
  return n + 0.25
end

function total_calls(k)
  local total = 0
  for _, c in pairs(calls[k]) do
    total = total + c
  end
  return total
end

function most_calls(k)
  local most = 0
  for _, c in pairs(calls[k]) do
    if c > most then
      most = c
    end
  end
  return most
end
