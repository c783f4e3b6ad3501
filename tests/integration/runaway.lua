-- Hooks that never stop by themselves, from step 3 on: faults.sh checks that
-- gflow's limits stop them and name the hook, the step and the limit.
function spin(n)
  if n >= 3 then
    while true do end
  end
end

function hog(n)
  if n >= 3 then
    local t, i = {}, 0
    while true do
      i = i + 1
      t[i] = string.rep("x", 64) .. i
    end
  end
end
