-- a hook file for the bad corpus: defines pulse only
function pulse(n)
  return n * 2
end
