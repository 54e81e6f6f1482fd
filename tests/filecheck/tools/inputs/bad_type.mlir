%x = pd.data "x" : tensor<?x13xf32>
%y = pd.relu %x : (tensor<?x13xf32>) -> tensor<?x14xf32>
