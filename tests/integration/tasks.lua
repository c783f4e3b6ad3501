-- Hooks for tasks.yaml: an initial value from the coordinates, and a task.
function ramp(x0, x1, x2, i0, i1, i2)
  return 10 * i0 + i1 + x1 / 4
end

function tick(n)
  print("tick", n)
end
