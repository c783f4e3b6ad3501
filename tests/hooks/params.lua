-- Reads and (wrongly) writes the read-only params table.
function read_vel()
  return params.vel
end

function read_unknown()
  if params.no_such_param == nil then return 1 end
  return 0
end

function write_vel()
  params.vel = 1.0
  return 0
end

function replace_metatable()
  setmetatable(params, {})
  return 0
end

function count_params()
  local n = 0
  for _, value in pairs(params) do n = n + value end
  return n
end
