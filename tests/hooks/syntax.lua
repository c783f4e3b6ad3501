-- A syntax error on line 2.
function f( return 1 end
