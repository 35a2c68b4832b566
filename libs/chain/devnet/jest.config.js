module.exports = {
  displayName: 'chain-devnet',
  preset: '../../../jest.preset.js',
  rootDir: __dirname,
};
