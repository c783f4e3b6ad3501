-- noisy.lua without save_state/restore_state: its state cannot be saved, so
-- a restart from a checkpoint taken after it changed is refused.
local seed = 12345

function noisy(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed / 2147483648 - 0.5) * 0.01 * math.exp(-n / 50)
end
