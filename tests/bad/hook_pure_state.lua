-- a hook file for the bad corpus: pulse, declared pure, next to a
-- save_state/restore_state pair that says the file keeps state
local calls = 0
function pulse(n)
  calls = calls + 1
  return n * 2
end
function calls_so_far() return calls end -- not pure: a file that gives it may keep state
function save_state() return calls end
function restore_state(saved) calls = saved end
