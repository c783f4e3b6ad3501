-- Hooks that run away, and one that stays within its budget.
function spin()
  while true do end
end

-- Catching the limit error with pcall must not let the hook go on.
function dodge()
  while true do
    pcall(function() while true do end end)
  end
end

function tail_dodge()
  return pcall(spin)
end

function busy(n)
  local s = 0
  for i = 1, n do s = s + i end
  return s
end

function hog()
  local t = {}
  local i = 0
  while true do
    i = i + 1
    t[i] = string.rep("x", 100) .. i
  end
end

function hog_once()
  return #string.rep("x", 1 << 30)
end
