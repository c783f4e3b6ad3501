-- The seed's forcing term: a Ricker wavelet of peak frequency params.fm,
-- delayed by params.td so that it starts near zero.
local pi = 3.141592 -- the seed's value of pi

function ricker(n)
  local t = n * params.dt - 2.0 * params.td
  local a = pi * pi * params.fm * params.fm * t * t
  return (1.0 - 2.0 * a) * math.exp(-a)
end
