-- A source whose amplitude follows a linear congruential sequence: state
-- carried from call to call, saved in a checkpoint and restored on restart.
local seed = 12345

function noisy(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return (seed / 2147483648 - 0.5) * 0.01 * math.exp(-n / 50)
end

function save_state()
  return {seed = seed, note = "lcg\n", nested = {1.5, true}}
end

function restore_state(state)
  assert(state.note == "lcg\n" and state.nested[1] == 1.5 and state.nested[2] == true)
  seed = state.seed
end
