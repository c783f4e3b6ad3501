-- Hooks for tests/good/features.yaml.
function bump3(x0, x1, x2, i0, i1, i2)
  return x0 + x1 + x2 + params.pi
end

function twice(n)
  return 2 * n
end
