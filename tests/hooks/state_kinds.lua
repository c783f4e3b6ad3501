-- Hooks without save_state: a pure one, and ones that keep state where the
-- fingerprint must see it (a global, an upvalue, math.random's generator).
function pure(n) return 2 * n end

total = 0
function global_sum(n) total = total + n; return total end

local calls = 0
function upvalue_count(n) calls = calls + 1; return calls end

function random(n) return math.random() end

