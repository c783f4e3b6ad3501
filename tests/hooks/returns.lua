-- Hooks that return something other than a number.
answer = 42

function ret_nil() return nil end
function ret_nothing() end
function ret_table() return {} end
function ret_bool() return true end
function ret_word() return "abc" end
function ret_numeric_string() return "2.5" end
