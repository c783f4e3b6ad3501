-- The seed's forcing term: a Ricker wavelet of peak frequency params.fm,
-- delayed by params.td so that it starts near zero. The seed computes it in
-- float with pi = 3.141592f; f32() (gflow's, as a C float cast) rounds to
-- float where the seed does, so gflow's array_out.dat is the seed's bit for bit.
local f32 = f32

local pi = f32(3.141592) -- the seed's value of pi
local dt = f32(params.dt)
local fm = f32(params.fm)
local td = f32(params.td) -- sqrt(6)/(pi*fm), rounded to float as the seed rounds it

function ricker(n)
  local t = f32(f32(n * dt) - 2.0 * td) -- float n*dt, then double, as the seed
  local a = f32(f32(f32(f32(f32(pi * pi) * fm) * fm) * t) * t)
  return f32(f32(1.0 - 2.0 * a) * f32(math.exp(-a)))
end
