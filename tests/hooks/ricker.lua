-- A Ricker wavelet like workflows/ricker.lua: the forcing term at step n.
local pi = 3.141592

function ricker(n)
  local t = n * params.dt - 2.0 * params.td
  local a = pi * pi * params.fm * params.fm * t * t
  return (1.0 - 2.0 * a) * math.exp(-a)
end

function weighted_sum(a, b, c)
  return a + 2 * b + 3 * c
end

function returns_nothing()
end
