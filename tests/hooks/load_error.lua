-- Fails while the file itself runs.
local x = 1
error("this file refuses to load (x = " .. x .. ")")
