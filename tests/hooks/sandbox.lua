-- probe(i) is 1 when the i-th value is reachable from a hook, 0 when it is nil.
local probes = {
  function() return io end,
  function() return os end,
  function() return require end,
  function() return load end,
  function() return loadfile end,
  function() return dofile end,
  function() return debug end,
  function() return package end,
  function() return collectgarbage end,
  function() return string.dump end,
  function() return getmetatable("").__index.dump end,
  function() return _G.io end,
  function() return coroutine end,
  -- Present: these show the probe can see a value.
  function() return math.sqrt end,
  function() return string.format end,
  function() return table.concat end,
  function() return utf8.char end,
  function() return pcall end,
  function() return print end,
  function() return setmetatable end,
}

function probe(i)
  if probes[i]() ~= nil then return 1 end
  return 0
end

function finalizer()
  setmetatable({}, {__gc = function() while true do end end})
  return 0
end

function plain_metatable()
  local t = setmetatable({}, {__index = function(_, k) return k * 2 end})
  return t[21]
end

function say()
  print("hello", 42, 1.5, true, nil)
end
